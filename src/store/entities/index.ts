// Every entity the ORM knows. Add one line per new entity file.
import { Organization } from './organization.js';
import { User } from './user.js';
import { ApiKey } from './api-key.js';
import { Session } from './session.js';

export { Organization, User, ApiKey, Session };

export const entities = [Organization, User, ApiKey, Session];
