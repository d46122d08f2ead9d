"""econ.analyses: see ../shared/DESIGN.md, "Package layout"."""
