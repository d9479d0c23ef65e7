"""The data directory: the shared write-ahead log, replay files, what is set aside."""
