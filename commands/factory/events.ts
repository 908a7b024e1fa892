export type Repository = {
  owner: string;
  repo: string;
};

export type FactoryFields = {
  name: string;
  alias: string | null;
  description: string | null;
  repositories: Repository[];
};

export type FactoryEvent =
  | { type: 'FactoryCreated'; data: FactoryFields & { uid: string; team_uid: string } }
  | { type: 'FactoryUpdated'; data: { uid: string; changes: Partial<FactoryFields> } }
  | { type: 'FactoryDeleted'; data: { uid: string } };

export const factoryStream = (uid: string) => `factory-${uid}`;
