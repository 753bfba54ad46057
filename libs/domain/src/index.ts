export * from './span';
export * from './events';
