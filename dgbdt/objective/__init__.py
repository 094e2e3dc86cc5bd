"""What a training minimises and reports: the objectives, the metrics and the
query groups of ranking."""
