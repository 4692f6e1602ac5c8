"""Pure domain: specs, validation rules, plans. No I/O."""
