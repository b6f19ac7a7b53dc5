export interface OptionsStay {
  module: string;
  fn: string;
  /** The function receives the options whole, not inside another object. */
  whole: boolean;
}

export interface OptionsTrail {
  command: string;
  file: string;
  fn: string;
  stays: OptionsStay[];
  rooms: string[];
  climbs: { from: string; to: string; fn: string }[];
}

export declare function optionsTrails(): { trails: OptionsTrail[]; wholeOutsideEdge: string[] };
