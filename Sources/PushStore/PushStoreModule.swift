import CSQLite
import PushCore
enum PushStoreModule {}
