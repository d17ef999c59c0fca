// Stops the containers globalSetup started (deploy/local servers keep running for the next run).
export default async function globalTeardown(): Promise<void> {
  await globalThis.fedisrvContainers?.stop();
}
