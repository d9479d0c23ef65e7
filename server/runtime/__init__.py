"""The trio runtime: the server's port, its tables' tasks, connections and their budgets."""
