"""The drivers that make and read the runs kept under results/ (experiments/README.md); run each as a module from
the repository root, e.g. `python -m experiments.paper1.sweeps list`."""
