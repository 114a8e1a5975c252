"""Figures of the ami_tables (to be declared: `@table(ID)` functions)."""
