/** TODO */
export {};
