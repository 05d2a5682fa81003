/* global AudioWorkletProcessor, registerProcessor */
// Mic capture for the direct voice session: hands each 128-sample float block to the main thread. A file of its
// own (not a Blob URL) so the portal's CSP can keep script-src 'self'.
class Capture extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) this.port.postMessage(channel.slice(0));
    return true;
  }
}
registerProcessor('capture', Capture);
