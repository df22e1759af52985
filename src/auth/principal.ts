/**
 * Who is calling: an organisation member with a role, resolved from `Authorization` (or a stream
 * token on SSE) by the authenticator. A domain fact of auth, which the HTTP layer carries.
 */
export interface Principal {
  org_id: string;
  user_id: string;
  role: 'admin' | 'member';
  /** The instance operator (the bootstrap admin) may manage organisations. */
  operator: boolean;
  via: 'api_key' | 'access_token' | 'stream_token';
  key_id?: string;
  /** Set for stream tokens: the only session whose SSE they open. */
  stream_session_id?: string;
}
