import NIOCore
import NIOPosix
import NIOHTTP2
import NIOSSL
import X509
import Crypto
enum APNsSimulatorModule {}
