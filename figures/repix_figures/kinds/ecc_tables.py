"""Figures of the ecc_tables (to be declared: `@table(ID)` functions)."""
