"""Domain errors. Services raise these; the HTTP layer turns them into ProblemDetails replies."""

from __future__ import annotations


class ReelroomError(Exception):
    status_code = 500
    title = "Internal Server Error"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequestError(ReelroomError):
    status_code = 400
    title = "Bad Request"


class UnauthorizedError(ReelroomError):
    status_code = 401
    title = "Unauthorized"


class ForbiddenError(ReelroomError):
    status_code = 403
    title = "Forbidden"


class NotFoundError(ReelroomError):
    status_code = 404
    title = "Not Found"


class ConflictError(ReelroomError):
    status_code = 409
    title = "Conflict"


class PayloadTooLargeError(ReelroomError):
    status_code = 413
    title = "Payload Too Large"


class ServiceUnavailableError(ReelroomError):
    status_code = 503
    title = "Service Unavailable"


class NotImplementedYetError(ReelroomError):
    status_code = 501
    title = "Not Implemented"


class TooManyRequestsError(ReelroomError):
    """429 with ``Retry-After`` (seconds)."""

    status_code = 429
    title = "Too Many Requests"

    def __init__(self, detail: str = "", retry_after: int = 1) -> None:
        super().__init__(detail)
        self.retry_after = max(1, int(retry_after))
