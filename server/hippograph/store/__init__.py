"""The only place kuzu, lancedb and fastembed appear: graph, read model, vector index, model."""
