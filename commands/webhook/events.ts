/**
 * Custom webhooks: their lifecycle (one stream per factory, so the 20-per-factory limit is decided
 * on the revision read) and their deliveries (one reservation stream per delivery identity, so a
 * repeated identity is a Duplicate even under concurrent posts).
 */

export const WEBHOOK_AUTH_MODES = ['token', 'url_token', 'signature'] as const;
export type WebhookAuthMode = (typeof WEBHOOK_AUTH_MODES)[number];
export const signatureSchemes = ['standard_webhooks', 'stripe', 'github', 'sentry', 'pagerduty', 'vercel'] as const;
export type SignatureScheme = (typeof signatureSchemes)[number];

/** A secret sealed with AES-256-GCM (`v1.<iv>.<tag>.<ciphertext>`, base64url): never clear text in an event. */
type SealedSecret = string;

/** Where a webhook's secret comes from: sealed in its own events, or a managed team secret by name. */
export type WebhookSecretRef = { sealed: SealedSecret } | { team_secret: string } | null;

export type WebhookFields = {
  name: string;
  enabled: boolean;
  delivery_id_header: string | null;
};

export type WebhookCreated = {
  type: 'WebhookCreated';
  data: WebhookFields & {
    uid: string;
    factory_uid: string;
    team_uid: string;
    auth_mode: WebhookAuthMode;
    signature_scheme: SignatureScheme | null;
    /** null while a provider that issues its secret later has not given it (the webhook is disabled). */
    secret: WebhookSecretRef;
  };
};
type WebhookUpdated = {
  type: 'WebhookUpdated';
  data: { uid: string; factory_uid: string; name: string; changes: Partial<WebhookFields> };
};
/** The old secret stops verifying the moment this event is written. */
type WebhookSecretRotated = {
  type: 'WebhookSecretRotated';
  data: { uid: string; factory_uid: string; name: string; secret: Exclude<WebhookSecretRef, null> };
};
type WebhookDeleted = { type: 'WebhookDeleted'; data: { uid: string; factory_uid: string; name: string } };

export type WebhookEvent = WebhookCreated | WebhookUpdated | WebhookSecretRotated | WebhookDeleted;

type DeliveryBase = {
  webhook_uid: string;
  factory_uid: string;
  team_uid: string;
  /** Unique per attempt. */
  delivery_id: string;
  size_bytes: number;
  received_at: string;
};

/** An authenticated, well-formed delivery with an identity seen for the first time: automations react to this. */
export type DeliveryAccepted = {
  type: 'DeliveryAccepted';
  data: DeliveryBase & { identity: string; payload_blob: string };
};
/** The same identity again: logged, starts nothing. */
type DeliveryDuplicated = {
  type: 'DeliveryDuplicated';
  data: DeliveryBase & { identity: string; duplicate_of: string };
};
export type DeliveryRejectionReason = 'auth' | 'invalid_json' | 'too_large';
/**
 * Refused: logged, starts nothing. With `count`, it stands for that many rejections of senders not
 * authenticated, counted past the failed-authentication budget instead of logged one by one
 * (`size_bytes` their sum, `received_at` the last of them).
 */
type DeliveryRejected = {
  type: 'DeliveryRejected';
  data: DeliveryBase & { reason: DeliveryRejectionReason; count?: number };
};

export type DeliveryEvent = DeliveryAccepted | DeliveryDuplicated | DeliveryRejected;

export const webhooksStream = (factoryUid: string) => `webhooks-${factoryUid}`;
/** The reservation of one delivery identity (hashed, so any header value makes a safe stream name). */
export const deliveryStream = (webhookUid: string, identityHash: string) => `delivery-${webhookUid}-${identityHash}`;
/** Rejected deliveries of one webhook: written with `any`, they decide nothing. */
export const rejectedDeliveriesStream = (webhookUid: string) => `deliveryrejections-${webhookUid}`;
