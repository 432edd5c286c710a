"""The vocabulary: facts, entities, edges and statuses; the pure lifecycle; input checks."""
