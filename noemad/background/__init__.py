"""Background cognition: jobs that run beside the cycle (reflection, consolidation) and their schedules."""
