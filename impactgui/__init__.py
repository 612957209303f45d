"""impactgui: the Qt desktop laboratory built on :mod:`solver`."""
