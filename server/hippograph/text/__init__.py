"""Text without stores: query intent and time phrases, the secrets scan, the recall narrative."""
