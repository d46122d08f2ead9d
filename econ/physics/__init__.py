"""econ.physics: see ../shared/DESIGN.md, "Package layout"."""
