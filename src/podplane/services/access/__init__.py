"""Who may call podplane: tokens, sign-in and the audit log."""
