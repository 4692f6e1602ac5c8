"""In-memory fakes of the cloud ports: dicts, no I/O, the domain's error codes.

Each fake keeps what it holds and the mutating calls it received (`calls`), and raises the
CloudErrors the real adapters would (built by `domain.cloud_errors` from the AWS error code),
so a step's logic can be tested in milliseconds. `fail(operation, *codes)` queues AWS error
codes the next calls of `operation` answer with.
"""
