"""impactgui's mechanics: nonsmooth impacts, contact and event-driven motion.

Pure numpy/scipy; this package never imports Qt.
"""
