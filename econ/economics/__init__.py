"""econ.economics: see ../shared/DESIGN.md, "Package layout"."""
