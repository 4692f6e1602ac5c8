"""Use cases. Every public function declares its effect once with @service."""
