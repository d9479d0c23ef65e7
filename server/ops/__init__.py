"""What an operator looks at (metrics, health, logs) and the process's housekeeping."""
