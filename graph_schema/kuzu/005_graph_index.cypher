// hippograph graph schema v5: the graph's shape is indexed beside the file (graph.kuzu.index).
//
// From v5 every write also reaches a SQLite index of the graph's shape (ids, statuses, edges,
// tags, claims, sessions: store/graph_index.py), kept across clean closes and built again from
// this file when it may be stale. A hippograph older than v5 would write here without keeping
// that index current: raising the version is what makes it refuse this file. No table changes.
