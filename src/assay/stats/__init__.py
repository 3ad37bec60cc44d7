"""The statistics: intervals, tests and agreement (``core``), the paired tests a comparison chooses
among (``paired``), comparing runs and the gate (``compare``), sizing a comparison (``plan``), judge
calibration (``calibration``) and the position-bias probe (``bias``). Nothing is imported here, so a
module that needs an interval does not load the comparison's store reads."""
