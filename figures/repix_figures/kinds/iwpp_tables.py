"""Figures of the iwpp_tables (to be declared: `@table(ID)` functions)."""
