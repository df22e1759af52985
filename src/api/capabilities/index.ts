export { capabilitiesRoutes } from './routes.js';
