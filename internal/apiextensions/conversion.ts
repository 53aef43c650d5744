// Conversion between a CRD's served versions.
import type { ApiObject } from '../apimachinery/meta.js';
import type { Converter } from './types.js';

/** `None`: the same object under another apiVersion. */
export const noneConverter: Converter = {
  convert: async (objects: ApiObject[], desiredAPIVersion: string) =>
    objects.map((o) => (o.apiVersion === desiredAPIVersion ? o : { ...o, apiVersion: desiredAPIVersion })),
};
