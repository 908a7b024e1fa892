/**
 * Typed domain errors. Deciders and handlers throw them; the HTTP layer turns each into an
 * application/problem+json response with its status and stable snake_case code.
 */
export interface FieldError {
  path: string;
  message: string;
}

export class DomainError extends Error {
  /** Whether the same request may succeed later (problem+json `retryable`); unset when it says nothing. */
  retryable?: boolean;
  /** Members of the problem beyond the common ones (RFC 9457 extensions), such as a validation's diagnostics. */
  extensions?: Record<string, unknown>;

  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail: string,
    readonly errors?: FieldError[],
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

export class InvalidRequest extends DomainError {
  constructor(detail: string, errors?: FieldError[], code = 'invalid_request') {
    super(400, code, 'Invalid request', detail, errors);
  }
}

export class Unauthorized extends DomainError {
  constructor(detail = 'A valid bearer credential is required') {
    super(401, 'authentication_required', 'Unauthorized', detail);
  }
}

export class Forbidden extends DomainError {
  constructor(detail: string) {
    super(403, 'not_authorized', 'Forbidden', detail);
  }
}

export class NotFound extends DomainError {
  constructor(resource: string, id?: string) {
    super(
      404,
      'resource_not_found',
      'Not found',
      id === undefined ? `${resource} not found` : `${resource} ${id} not found`,
    );
  }
}

export class Conflict extends DomainError {
  constructor(detail: string, code = 'conflict', retryable?: boolean) {
    super(409, code, 'Conflict', detail);
    if (retryable !== undefined) this.retryable = retryable;
  }
}

export class LimitExceeded extends DomainError {
  constructor(detail: string) {
    super(409, 'limit_exceeded', 'Limit exceeded', detail);
  }
}

export class Unprocessable extends DomainError {
  constructor(detail: string, code = 'operation_not_supported') {
    super(422, code, 'Unprocessable request', detail);
  }
}

/**
 * The change was saved, but a read model could not apply one of its events and set it aside
 * (projector/isolate): reads will not show it until an operator retries it. Not retryable: the
 * same request again would make the change a second time.
 */
export class ReadModelFailed extends DomainError {
  constructor(readModels: readonly string[]) {
    super(
      500,
      'read_model_failed',
      'Read model failed',
      `The change was saved, but the read model${readModels.length > 1 ? 's' : ''} ${readModels.join(', ')} could not apply it; it was set aside for an operator (see /readyz), and reads may not show it until it is retried`,
    );
    this.retryable = false;
  }
}
