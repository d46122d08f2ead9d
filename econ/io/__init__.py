"""econ.io: see ../shared/DESIGN.md, "Package layout"."""
