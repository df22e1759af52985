import { Type, type Static } from '@sinclair/typebox';
import { ListOf, Timestamp, Uuid } from './common.js';
import { Email, Password } from './users.js';

export const Organization = Type.Object(
  { id: Uuid, name: Type.String(), created_at: Timestamp, updated_at: Timestamp },
  { $id: 'Organization', additionalProperties: false },
);

export const OrganizationCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    admin: Type.Object(
      { email: Email, name: Type.String({ minLength: 1, maxLength: 256 }), password: Password },
      { additionalProperties: false, description: 'The first admin of the new organisation.' },
    ),
  },
  { $id: 'OrganizationCreate', additionalProperties: false },
);

export const OrganizationCreated = Type.Object(
  { organization: Type.Ref('Organization'), admin: Type.Ref('User') },
  { $id: 'OrganizationCreated', additionalProperties: false },
);

export const OrganizationList = ListOf(Type.Ref('Organization'), 'OrganizationList');

export type OrganizationBody = Static<typeof Organization>;
export type OrganizationCreateBody = Static<typeof OrganizationCreate>;

export const orgSchemas = [Organization, OrganizationCreate, OrganizationCreated, OrganizationList];
