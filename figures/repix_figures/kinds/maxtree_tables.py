"""Figures of the maxtree_tables (to be declared: `@table(ID)` functions)."""
