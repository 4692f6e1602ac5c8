"""Instance groups: plan, add, scale, change and delete, with their workflows."""
