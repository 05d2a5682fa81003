/** A detected face: box and the 468-point face mesh (MediaPipe layout) in the image's pixel coordinates. */
export interface Face {
  score: number;
  box: [number, number, number, number];
  mesh: [number, number][];
}

/** An RGB24 image (row-major, 3 bytes per pixel). */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Face-landmark detector: finds faces and their meshes in an RGB image. */
export interface FaceLandmarker {
  readonly label: string;
  detect(image: RgbImage, maxFaces?: number): Promise<Face[]>;
}

/** Mesh indices used by the warps (MediaPipe face mesh numbering). */
export const MESH = {
  upperLipInner: 13,
  lowerLipInner: 14,
  upperLipTop: 0,
  lowerLipBottom: 17,
  mouthLeft: 61,
  mouthRight: 291,
  chin: 152,
  noseTip: 1,
  leftEyeUpper: 159,
  leftEyeLower: 145,
  leftEyeOuter: 33,
  leftEyeInner: 133,
  rightEyeUpper: 386,
  rightEyeLower: 374,
  rightEyeInner: 362,
  rightEyeOuter: 263,
} as const;
