// Key rights (SPEC §2): an absent or empty right grants nothing, except allowed_template_keys, which
// restricts only when non-empty.
import { AppError } from '../errors.js';
import type { Rights } from '../schemas/common.js';
import type { CartType, Permission } from './catalog.js';

export function requirePermission(rights: Rights, permission: Permission): void {
  if (!(rights.permissions ?? []).includes(permission)) {
    throw new AppError(
      403,
      'permission_denied',
      { reason: 'key_lacks_permission', params: { permission } },
      { permission },
    );
  }
}

export function requireEventAllowed(rights: Rights, eventType: string): void {
  if (!(rights.allowed_api_events ?? []).includes(eventType)) {
    throw new AppError(
      403,
      'event_type_not_allowed',
      { reason: 'key_event_type', params: { event_type: eventType } },
      {
        event_type: eventType,
      },
    );
  }
}

export function requireCartAllowed(rights: Rights, cartType: CartType): void {
  if (!(rights.allowed_cart_types ?? []).includes(cartType)) {
    throw new AppError(
      403,
      'cart_type_not_allowed',
      { reason: 'key_cart_type', params: { cart_type: cartType } },
      {
        cart_type: cartType,
      },
    );
  }
}

export function requireTemplateAllowed(rights: Rights, templateKey: string): void {
  const allowed = rights.allowed_template_keys ?? [];
  if (allowed.length > 0 && !allowed.includes(templateKey)) {
    throw new AppError(
      403,
      'template_not_allowed',
      { reason: 'key_template', params: { template_key: templateKey } },
      {
        template_key: templateKey,
      },
    );
  }
}

export function requireListAllowed(rights: Rights, listId: number): void {
  if (rights.list_id !== listId) {
    throw new AppError(
      403,
      'permission_denied',
      { reason: 'key_list', params: { list: listId } },
      {
        permission: 'list_contacts_write',
        list_id: listId,
      },
    );
  }
}
