print("reclaim")
