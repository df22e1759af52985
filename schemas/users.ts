import { Type, type Static } from '@sinclair/typebox';
import { ListOf, Timestamp, Uuid } from './common.js';

export const Role = Type.Union([Type.Literal('admin'), Type.Literal('member')], { $id: 'Role' });
/** A `$ref` to Role that keeps its static type. */
const RoleRef = Type.Unsafe<Static<typeof Role>>(Type.Ref('Role'));

/** Login email: compared lower-cased. */
export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
/** Passwords are hashed with scrypt; at least 8 characters. */
export const Password = Type.String({ minLength: 8, maxLength: 1024 });

export const User = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    email: Type.String(),
    name: Type.String(),
    role: RoleRef,
    operator: Type.Boolean({ description: 'The instance operator (the bootstrap admin) manages organisations.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'User', additionalProperties: false },
);

export const UserCreate = Type.Object(
  {
    email: Email,
    name: Type.String({ minLength: 1, maxLength: 256 }),
    password: Password,
    role: RoleRef,
  },
  { $id: 'UserCreate', additionalProperties: false },
);

export const UserUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    role: Type.Optional(RoleRef),
    password: Type.Optional(Password),
  },
  { $id: 'UserUpdate', additionalProperties: false },
);

export const UserList = ListOf(Type.Ref('User'), 'UserList');

export type UserBody = Static<typeof User>;
export type UserCreateBody = Static<typeof UserCreate>;
export type UserUpdateBody = Static<typeof UserUpdate>;
export type RoleName = Static<typeof Role>;

export const userSchemas = [Role, User, UserCreate, UserUpdate, UserList];
