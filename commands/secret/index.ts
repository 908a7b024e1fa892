/** Team secrets, sealed at rest: named credentials that webhooks refer to. */
import { feature } from '../../src/feature.js';
import teamSecretRoutes from './routes.js';

export const secretFeature = feature({ name: 'secret', routes: [teamSecretRoutes] });
