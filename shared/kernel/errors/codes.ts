/**
 * Every API error code in one table: code → HTTP status, error type (the OpenAI/Stripe-style family that SDKs
 * read) and a message template. `{name}` placeholders are filled from the error's params. Add codes here, never
 * inline a status in a route.
 */
export const ERROR_TYPES = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  conflict: 'conflict_error',
  rate_limit: 'rate_limit_error',
  billing: 'billing_error',
  api: 'api_error',
  unavailable: 'service_unavailable_error',
} as const;

const t = ERROR_TYPES;

export const ERROR_CODES = {
  // 400
  validation_failed: { status: 400, type: t.invalid_request, message: '{detail}' },
  invalid_json: { status: 400, type: t.invalid_request, message: 'The request body is not valid JSON: {detail}' },
  invalid_cursor: { status: 400, type: t.invalid_request, message: 'The cursor is not one this API returned.' },
  invalid_url: { status: 400, type: t.invalid_request, message: '{detail}' },
  url_not_allowed: {
    status: 400,
    type: t.invalid_request,
    message: 'The URL resolves to a private, loopback or link-local address ({detail}); use a public URL.',
  },
  url_fetch_failed: { status: 400, type: t.invalid_request, message: 'Could not fetch the URL: {detail}' },
  provider_unavailable: {
    status: 400,
    type: t.invalid_request,
    message: 'Provider "{provider}" is not available: {detail}',
  },
  unsupported_language: { status: 400, type: t.invalid_request, message: '{detail}' },
  /** A local synthesis stopped at its CPU deadline (docs/speech.md); the work done is charged. */
  synthesis_too_costly: { status: 400, type: t.invalid_request, message: '{detail}' },
  invalid_audio: { status: 400, type: t.invalid_request, message: 'The audio could not be decoded: {detail}' },
  invalid_multipart: {
    status: 400,
    type: t.invalid_request,
    message: 'The multipart/form-data body is malformed ({detail}). Send a boundary and complete parts.',
  },
  bad_request: { status: 400, type: t.invalid_request, message: '{detail}' },
  invalid_phone_number: {
    status: 400,
    type: t.invalid_request,
    message: '{detail}',
  },
  // 401
  missing_api_key: {
    status: 401,
    type: t.authentication,
    message: 'No API key provided. Send it as "Authorization: Bearer <key>".',
  },
  malformed_api_key: {
    status: 401,
    type: t.authentication,
    message: 'The API key is malformed. Keys start with "{prefix}"; check that it was copied whole.',
  },
  invalid_api_key: { status: 401, type: t.authentication, message: 'The API key is not recognised.' },
  expired_api_key: {
    status: 401,
    type: t.authentication,
    message: 'The API key expired at {expiresAt}. Create a new key.',
  },
  revoked_api_key: { status: 401, type: t.authentication, message: 'The API key was revoked. Create a new key.' },
  rotated_api_key: {
    status: 401,
    type: t.authentication,
    message: 'The API key was rotated and replaced by a newer key. Use the key returned by the rotation.',
  },
  invalid_session_token: { status: 401, type: t.authentication, message: 'The session token is invalid or expired.' },
  invalid_signature: { status: 401, type: t.authentication, message: 'The request signature is invalid.' },
  portal_session_required: {
    status: 401,
    type: t.authentication,
    message: 'Sign in to the portal first. Portal routes take the session cookie, not an API key.',
  },
  invalid_otp: {
    status: 401,
    type: t.authentication,
    message: 'The code is not correct. {remaining} attempts left.',
  },
  otp_expired: {
    status: 401,
    type: t.authentication,
    message: 'The code has expired or was never sent. Request a new code.',
  },
  // 402
  insufficient_credits: {
    status: 402,
    type: t.billing,
    message:
      'Not enough credits: this request needs {needed} and {remaining} remain. Upgrade the plan or wait for the next period.',
  },
  spending_cap_reached: {
    status: 402,
    type: t.billing,
    message:
      'The daily spending cap of the {scope} ({cap} credits) leaves {remaining} today and this needs {needed}. Raise the cap with PUT /v1/billing/spending-caps or wait for the next UTC day.',
  },
  // 403
  wrong_credential: { status: 403, type: t.permission, message: '{detail}' },
  csrf_failed: {
    status: 403,
    type: t.permission,
    message: 'Cross-site request check failed: {detail}',
  },
  // 404
  // {idRef} is `id "agt_x"` for a well-formed id and `that id` for anything else (api-error.ts): ids help, while
  // whatever else a caller sent (long text, patterns, object keys) is never echoed back.
  not_found: { status: 404, type: t.not_found, message: 'No {resource} with {idRef}.' },
  route_not_found: { status: 404, type: t.not_found, message: 'No route {method} {path}. See /docs for the API.' },
  webhook_secret_not_found: {
    status: 404,
    type: t.not_found,
    message:
      'No signing secret for that address yet: create it with POST /v1/webhooks/secret {"url": ...}, or submit a job whose webhook_url is the address.',
  },
  // 405/409/413/415
  method_not_allowed: { status: 405, type: t.invalid_request, message: '{detail}' },
  conflict: { status: 409, type: t.conflict, message: '{detail}' },
  already_exists: { status: 409, type: t.conflict, message: 'A {resource} with {idRef} already exists.' },
  idempotency_key_reused: {
    status: 409,
    type: t.conflict,
    message: 'This Idempotency-Key was used with a different request body. Use a new key for a new request.',
  },
  idempotency_response_unavailable: {
    status: 409,
    type: t.conflict,
    message:
      'A request with this Idempotency-Key already completed, but its response was streamed and cannot be replayed. Use a new key to run the request again.',
  },
  idempotency_secret_not_stored: {
    status: 409,
    type: t.conflict,
    message:
      'A request with this Idempotency-Key already created {resource} "{id}". Its secret is shown only once and is not stored, so the response cannot be replayed; {hint}',
  },
  idempotency_in_progress: {
    status: 409,
    type: t.conflict,
    message: 'A request with this Idempotency-Key is still in progress. Retry after it finishes.',
  },
  request_timeout: { status: 408, type: t.invalid_request, message: 'The request was not received in time.' },
  payload_too_large: { status: 413, type: t.invalid_request, message: 'The {what} exceeds the limit of {limit}.' },
  uri_too_long: { status: 414, type: t.invalid_request, message: 'The {what} is too long (at most {limit}).' },
  unsupported_media_type: { status: 415, type: t.invalid_request, message: '{detail}' },
  upgrade_required: {
    status: 426,
    type: t.invalid_request,
    message: 'This endpoint is a WebSocket: connect with an Upgrade: websocket request.',
  },
  headers_too_large: {
    status: 431,
    type: t.invalid_request,
    message: 'The request headers exceed the limit of {limit}.',
  },
  // 429
  rate_limited: {
    status: 429,
    type: t.rate_limit,
    message: 'Rate limit of {limit} requests per {window}s exceeded. Retry after {retryAfter}s.',
  },
  otp_attempts_exhausted: {
    status: 429,
    type: t.rate_limit,
    message: 'Too many wrong codes. Request a new code.',
  },
  otp_resend_cooldown: {
    status: 429,
    type: t.rate_limit,
    message: 'A code was sent moments ago. Wait {retryAfter}s before asking for another.',
  },
  concurrent_sessions_limited: {
    status: 429,
    type: t.rate_limit,
    message: 'This account already has {limit} realtime sessions running, the most its tier allows at once.',
  },
  test_runs_in_flight_limited: {
    status: 429,
    type: t.rate_limit,
    message:
      'This account already has {limit} agent test runs and call replays queued or running, the most its tier ' +
      'allows at once. Retry after {retryAfter}s, or once one of them has finished.',
  },
  local_syntheses_limited: {
    status: 429,
    type: t.rate_limit,
    message:
      'This account already has {limit} syntheses running on the local voices, the most one account may run at ' +
      'once. Retry after {retryAfter}s, or once one of them has finished.',
  },
  otp_send_limited: {
    status: 429,
    type: t.rate_limit,
    message: 'Too many codes requested {scope}. Retry after {retryAfter}s.',
  },
  // 5xx
  internal_error: {
    status: 500,
    type: t.api,
    message: 'An internal error occurred. Retry, and report the requestId if it persists.',
  },
  upstream_error: { status: 502, type: t.api, message: 'The upstream provider "{provider}" failed: {detail}' },
  dependency_unavailable: {
    status: 503,
    type: t.unavailable,
    message: '{dependency} is unavailable right now. Retry shortly.',
  },
  storage_full: {
    status: 507,
    type: t.unavailable,
    message: 'Storage is full on this server; nothing was stored. Retry later, or ask the operator to free space.',
  },
  feature_not_configured: { status: 503, type: t.unavailable, message: '{detail}' },
  over_capacity: {
    status: 503,
    type: t.unavailable,
    message: 'The voice service is at capacity. Retry after {retryAfter}s.',
  },
  upstream_timeout: { status: 504, type: t.api, message: 'The upstream provider "{provider}" timed out.' },
  billing_not_configured: {
    status: 503,
    type: t.unavailable,
    message: 'Billing is not configured on this server (the operator has not set STRIPE_SECRET_KEY and its group).',
  },
  verification_unsupported: {
    status: 400,
    type: t.invalid_request,
    message: 'Keys for provider "{provider}" cannot be verified here; they are checked on first use instead.',
  },
} as const satisfies Record<string, { status: number; type: string; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
