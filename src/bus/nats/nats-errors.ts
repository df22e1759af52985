import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';

/**
 * The JetStream API error codes this adapter branches on (server `errors.json`). Callers
 * compare against these names, never bare numbers (style rule 13).
 */
export const JetStreamErrorCodes = {
  /** `Nats-Expected-Last-Subject-Sequence` did not match: someone else appended first. */
  WrongLastSequence: 10071,
  /** Same, while another expected-sequence publish on that subject is still in flight. */
  WrongLastSequenceInFlight: 10164,
  /** `Nats-Expected-Last-Msg-Id` did not match: another message was stored in between. */
  WrongLastMsgId: 10070,
  /** Expected-sequence checks are unavailable for a moment (leader change); retry. */
  LastSequenceUnavailable: 10163,
  /** The same Nats-Msg-Id is being stored right now (clustered); retry and it dedups. */
  DuplicateMsgIdInProcess: 10158,
  /** The store refused the message; the description says why (e.g. the per-subject limit). */
  StoreFailed: 10077,
  /** No stream with this name (yet). */
  StreamNotFound: 10059,
  /** A stream with this name exists with another configuration. */
  StreamNameInUse: 10058,
  /** A durable consumer with this name exists with another configuration. */
  ConsumerAlreadyExists: 10148,
  /** Placement found too few peers: normal for a moment while a fresh cluster forms. */
  ClusterNoPeers: 10005,
  /** The JetStream cluster (meta leader) is not available yet. */
  ClusterNotAvailable: 10008,
  /** The node asked cannot answer for the cluster now (it lost or is looking for its leader). */
  ClusterNotLeader: 10009,
  /** The stream's group has no leader (its node is down, an election is under way). */
  StreamOffline: 10118,
  /** The consumer's group has no leader. */
  ConsumerOffline: 10119,
  /** A message delete failed; "no message found" when it was deleted or purged already. */
  MessageDeleteFailed: 10057,
  /** A replicated stream's delete found no message at that sequence (deleted already). */
  SequenceNotFound: 10043,
} as const;

/** The store error text of `discard_new_per_subject` on a subject that already holds its one message. */
export const MAX_MSGS_PER_SUBJECT_EXCEEDED = 'maximum messages per subject exceeded';

/** The status a pull gets when nobody listens on the consumer's subject. */
const NO_RESPONDERS_STATUS = 503;

/** The JetStream API error code of `err`, or undefined for anything else. */
export function apiErrorCode(err: unknown): number | undefined {
  return err instanceof JetStreamApiError ? err.code : undefined;
}

/** True for the conflicts an expected-sequence append resolves by reloading the tail and retrying. */
export function isSequenceConflict(err: unknown): boolean {
  return apiErrorCode(err) === JetStreamErrorCodes.WrongLastSequence;
}

/** True when a chained publish was refused because its predecessor is not the stream's last message. */
export function isChainBroken(err: unknown): boolean {
  return apiErrorCode(err) === JetStreamErrorCodes.WrongLastMsgId;
}

/** True for transient refusals worth a short backoff and a retry. */
export function isTransientAppendError(err: unknown): boolean {
  const code = apiErrorCode(err);
  return (
    code === JetStreamErrorCodes.WrongLastSequenceInFlight ||
    code === JetStreamErrorCodes.LastSequenceUnavailable ||
    code === JetStreamErrorCodes.DuplicateMsgIdInProcess
  );
}

/** True when the TURNS stream refused a message because the session already has a turn. */
export function isSubjectFull(err: unknown): boolean {
  return (
    apiErrorCode(err) === JetStreamErrorCodes.StoreFailed && err instanceof Error && err.message.includes(MAX_MSGS_PER_SUBJECT_EXCEEDED)
  );
}

/**
 * True when a message delete found nothing to delete (deleted or purged already): a single
 * server says "no message found", a replicated stream "sequence not found".
 */
export function isAlreadyDeleted(err: unknown): boolean {
  const code = apiErrorCode(err);
  if (code === JetStreamErrorCodes.SequenceNotFound) return true;
  return code === JetStreamErrorCodes.MessageDeleteFailed && err instanceof Error && err.message.includes('no message found');
}

/** True when an "empty subject" publish (expected last subject sequence 0) found a message there or one on its way. */
export function isSubjectTaken(err: unknown): boolean {
  const code = apiErrorCode(err);
  return code === JetStreamErrorCodes.WrongLastSequence || code === JetStreamErrorCodes.WrongLastSequenceInFlight;
}

/** True for errors a freshly started cluster gives until its peers know each other. */
export function isClusterForming(err: unknown): boolean {
  const code = apiErrorCode(err);
  return code === JetStreamErrorCodes.ClusterNoPeers || code === JetStreamErrorCodes.ClusterNotAvailable;
}

/** True when a pull found no one listening on the consumer's subject (status 503). */
export function isNoResponders(err: unknown): boolean {
  return err instanceof JetStreamError && (err as JetStreamError & { code?: unknown }).code === NO_RESPONDERS_STATUS;
}
