from kvtrace.entry import main

main()
