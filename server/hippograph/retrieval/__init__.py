"""Which facts answer a query, and in what order: channels, graph expansion, fusion, ranking."""
