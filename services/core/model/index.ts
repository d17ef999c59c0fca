// Importing every model module registers its collection and indexes (see db/mongo.ts).
import './accounts.ts';
import './users.ts';
import './oauth.ts';
import './roles.ts';
import './settings.ts';
import './adminActions.ts';
import './media.ts';
import './polls.ts';
import './scheduledStatuses.ts';
