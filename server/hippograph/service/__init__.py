"""The service: one open memory, its writes, curation, reads, upkeep and transfer."""
