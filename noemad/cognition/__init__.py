"""The cognitive cycle and what it works on: memories, beliefs and their evidence."""
