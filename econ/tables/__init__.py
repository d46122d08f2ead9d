"""econ.tables: see ../shared/DESIGN.md, "Package layout"."""
