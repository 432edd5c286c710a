"""The only place the engines and models appear (ladybug, lancedb, onnxruntime, fastembed, spaCy):
graph, read model, vector index, models."""
